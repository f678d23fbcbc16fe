set terminal pngcairo size 1280,732 font ",11"
set output "compare.png"
# size 1280 732
reset
set title "sysbench threads --threads=8 --thread-yields=50 --thread-locks=2 --events=4000 --time=0 run\n/total time:/ (lower is better): median, bars from min to max" noenhanced
set ylabel "total time:" noenhanced
set grid ytics
set bmargin 13
set label 101 "! noisy: its runs spread more than 1.5x (max/min)" at graph 0, graph 0 offset 0, -9 left font ",9" noenhanced textcolor rgb "red"
set label 102 "not ok: cal-fp (0/3 ok; 1 over-limit (>11.5 s); 2 skipped), mcs-tp (0/3 ok; 1 over-limit (>11.5 s); 2 skipped)," at graph 0, graph 0 offset 0, -10 left font ",9" noenhanced
set label 103 "        clh-tp (0/3 ok; 1 over-limit (>11.6 s); 2 skipped)" at graph 0, graph 0 offset 0, -11 left font ",9" noenhanced
set yrange [0:*]; set offsets 0, 0, graph 0.1, 0
set xtics rotate by -40 left noenhanced ("pthread" 0, "backoff" 1, "ttas" 2, "glibc" 3, "tas" 4, "auto" 5, "clh" 6, "alock" 7, "clh-try" 8, "clh-nb" 9, "mcs-nb" 10, "mcs" 11, "mcs-try" 12, "ticket" 13, "cal" 14, "cal-fp" 15, "mcs-tp" 16, "clh-tp" 17)
set xrange [-0.7:17.700000]
set key off
set label 2 "above each bar: its median / glibc median (! noisy)" at graph 0.01, graph 0.97 left font ",9"
set boxwidth 0.7
set style fill border -1
set label 3 "0.81x" at 0, 1.247 center offset 0, 0.8 font ",8" noenhanced
set label 4 "0.88x" at 1, 1.311 center offset 0, 0.8 font ",8" noenhanced
set label 5 "0.90x!" at 2, 1.81 center offset 0, 0.8 font ",8" noenhanced
set label 6 "1.00x!" at 3, 1.799 center offset 0, 0.8 font ",8" noenhanced
set label 7 "1.13x" at 4, 1.816 center offset 0, 0.8 font ",8" noenhanced
set label 8 "2.04x!" at 5, 4.333 center offset 0, 0.8 font ",8" noenhanced
set label 9 "2.19x!" at 6, 4.518 center offset 0, 0.8 font ",8" noenhanced
set label 10 "2.25x!" at 7, 4.469 center offset 0, 0.8 font ",8" noenhanced
set label 11 "2.95x!" at 8, 4.787 center offset 0, 0.8 font ",8" noenhanced
set label 12 "3.05x" at 9, 4.348 center offset 0, 0.8 font ",8" noenhanced
set label 13 "3.20x" at 10, 4.968 center offset 0, 0.8 font ",8" noenhanced
set label 14 "3.31x!" at 11, 4.643 center offset 0, 0.8 font ",8" noenhanced
set label 15 "3.75x" at 12, 5.152 center offset 0, 0.8 font ",8" noenhanced
set label 16 "7.18x!" at 13, 11.178 center offset 0, 0.8 font ",8" noenhanced
set label 17 "7.34x" at 14, 11.547 center offset 0, 0.8 font ",8" noenhanced
set label 18 "1 over-limit (>11.5 s); 2 skipped" at 15, graph 0.03 rotate by 90 left font ",9" noenhanced
set label 19 "1 over-limit (>11.5 s); 2 skipped" at 16, graph 0.03 rotate by 90 left font ",9" noenhanced
set label 20 "1 over-limit (>11.6 s); 2 skipped" at 17, graph 0.03 rotate by 90 left font ",9" noenhanced
plot "compare.dat" index 0 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#1f77b4" fs solid 0.6 title "pthread", \
     "compare.dat" index 1 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#9467bd" fs solid 0.6 title "backoff", \
     "compare.dat" index 2 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#d62728" fs solid 0.6 title "ttas", \
     "compare.dat" index 3 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "black" fs solid 0.35 title "glibc", \
     "compare.dat" index 4 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#2ca02c" fs solid 0.6 title "tas", \
     "compare.dat" index 5 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#ff7f0e" fs solid 0.6 title "auto", \
     "compare.dat" index 6 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#17becf" fs solid 0.6 title "clh", \
     "compare.dat" index 7 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#e377c2" fs solid 0.6 title "alock", \
     "compare.dat" index 8 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#7b68ee" fs solid 0.6 title "clh-try", \
     "compare.dat" index 9 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#ff7f0e" fs pattern 2 title "clh-nb", \
     "compare.dat" index 10 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#2ca02c" fs pattern 2 title "mcs-nb", \
     "compare.dat" index 11 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#bcbd22" fs solid 0.6 title "mcs", \
     "compare.dat" index 12 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#1f77b4" fs pattern 2 title "mcs-try", \
     "compare.dat" index 13 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#8c564b" fs solid 0.6 title "ticket", \
     "compare.dat" index 14 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#d62728" fs pattern 2 title "cal", \
     "compare.dat" index 15 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#9467bd" fs pattern 2 title "cal-fp", \
     "compare.dat" index 16 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#8c564b" fs pattern 2 title "mcs-tp", \
     "compare.dat" index 17 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#e377c2" fs pattern 2 title "clh-tp"
