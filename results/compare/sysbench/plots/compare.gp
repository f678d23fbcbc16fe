set terminal pngcairo size 1220,768 font ",11"
set output "compare.png"
# size 1220 768
reset
set title "sysbench mutex --threads=4 --mutex-num=1 --mutex-locks=1000000 --mutex-loops=100 run\n/total time:/ (lower is better): median, bars from min to max" noenhanced
set ylabel "total time:" noenhanced
set grid ytics
set bmargin 15
set label 101 "! noisy: its runs spread more than 1.5x (max/min)" at graph 0, graph 0 offset 0, -9 left font ",9" noenhanced textcolor rgb "red"
set label 102 "not ok: ticket (0/3 ok; 1 over-limit (>10.6 s); 2 skipped), alock (0/3 ok; 1 over-limit (>10.4 s); 2 skipped)," at graph 0, graph 0 offset 0, -10 left font ",9" noenhanced
set label 103 "        clh (0/3 ok; 1 over-limit (>10.9 s); 2 skipped), mcs (0/3 ok; 1 over-limit (>10.7 s); 2 skipped)," at graph 0, graph 0 offset 0, -11 left font ",9" noenhanced
set label 104 "        clh-try (0/3 ok; 1 over-limit (>10.2 s); 2 skipped), clh-nb (0/3 ok; 1 over-limit (>10.8 s); 2 skipped)," at graph 0, graph 0 offset 0, -12 left font ",9" noenhanced
set label 105 "        mcs-nb (0/3 ok; 1 over-limit (>10.9 s); 2 skipped)" at graph 0, graph 0 offset 0, -13 left font ",9" noenhanced
set yrange [0:*]; set offsets 0, 0, graph 0.1, 0
set xtics rotate by -40 left noenhanced ("glibc" 0, "tas" 1, "ttas" 2, "backoff" 3, "pthread" 4, "mcs-tp" 5, "clh-tp" 6, "cal-fp" 7, "cal" 8, "mcs-try" 9, "ticket" 10, "alock" 11, "clh" 12, "mcs" 13, "clh-try" 14, "clh-nb" 15, "mcs-nb" 16)
set xrange [-0.7:16.700000]
set key off
set label 2 "above each bar: its median / glibc median (! noisy)" at graph 0.01, graph 0.97 left font ",9"
set boxwidth 0.7
set style fill border -1
set label 3 "1.00x" at 0, 0.267 center offset 0, 0.8 font ",8" noenhanced
set label 4 "1.08x!" at 1, 0.314 center offset 0, 0.8 font ",8" noenhanced
set label 5 "1.19x" at 2, 0.274 center offset 0, 0.8 font ",8" noenhanced
set label 6 "1.29x!" at 3, 0.344 center offset 0, 0.8 font ",8" noenhanced
set label 7 "1.30x" at 4, 0.283 center offset 0, 0.8 font ",8" noenhanced
set label 8 "1.81x!" at 5, 1.079 center offset 0, 0.8 font ",8" noenhanced
set label 9 "2.59x!" at 6, 0.636 center offset 0, 0.8 font ",8" noenhanced
set label 10 "2.63x!" at 7, 0.608 center offset 0, 0.8 font ",8" noenhanced
set label 11 "4.70x" at 8, 1.214 center offset 0, 0.8 font ",8" noenhanced
set label 12 "6.37x!" at 9, 4.803 center offset 0, 0.8 font ",8" noenhanced
set label 13 "1 over-limit (>10.6 s); 2 skipped" at 10, graph 0.03 rotate by 90 left font ",9" noenhanced
set label 14 "1 over-limit (>10.4 s); 2 skipped" at 11, graph 0.03 rotate by 90 left font ",9" noenhanced
set label 15 "1 over-limit (>10.9 s); 2 skipped" at 12, graph 0.03 rotate by 90 left font ",9" noenhanced
set label 16 "1 over-limit (>10.7 s); 2 skipped" at 13, graph 0.03 rotate by 90 left font ",9" noenhanced
set label 17 "1 over-limit (>10.2 s); 2 skipped" at 14, graph 0.03 rotate by 90 left font ",9" noenhanced
set label 18 "1 over-limit (>10.8 s); 2 skipped" at 15, graph 0.03 rotate by 90 left font ",9" noenhanced
set label 19 "1 over-limit (>10.9 s); 2 skipped" at 16, graph 0.03 rotate by 90 left font ",9" noenhanced
plot "compare.dat" index 0 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "black" fs solid 0.35 title "glibc", \
     "compare.dat" index 1 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#ff7f0e" fs solid 0.6 title "tas", \
     "compare.dat" index 2 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#2ca02c" fs solid 0.6 title "ttas", \
     "compare.dat" index 3 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#d62728" fs solid 0.6 title "backoff", \
     "compare.dat" index 4 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#1f77b4" fs solid 0.6 title "pthread", \
     "compare.dat" index 5 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#9467bd" fs pattern 2 title "mcs-tp", \
     "compare.dat" index 6 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#8c564b" fs pattern 2 title "clh-tp", \
     "compare.dat" index 7 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#d62728" fs pattern 2 title "cal-fp", \
     "compare.dat" index 8 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#2ca02c" fs pattern 2 title "cal", \
     "compare.dat" index 9 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#7b68ee" fs solid 0.6 title "mcs-try", \
     "compare.dat" index 10 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#9467bd" fs solid 0.6 title "ticket", \
     "compare.dat" index 11 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#8c564b" fs solid 0.6 title "alock", \
     "compare.dat" index 12 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#e377c2" fs solid 0.6 title "clh", \
     "compare.dat" index 13 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#17becf" fs solid 0.6 title "mcs", \
     "compare.dat" index 14 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#bcbd22" fs solid 0.6 title "clh-try", \
     "compare.dat" index 15 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#1f77b4" fs pattern 2 title "clh-nb", \
     "compare.dat" index 16 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#ff7f0e" fs pattern 2 title "mcs-nb"
