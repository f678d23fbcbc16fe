set terminal pngcairo size 1220,696 font ",11"
set output "compare.png"
# size 1220 696
reset
set title "build/lockbench -t 4 -d 1\n/throughput/ (higher is better): median, bars from min to max" noenhanced
set ylabel "throughput" noenhanced
set grid ytics
set bmargin 11
set label 101 "! noisy: its runs spread more than 1.5x (max/min)" at graph 0, graph 0 offset 0, -9 left font ",9" noenhanced textcolor rgb "red"
set yrange [0:*]; set offsets 0, 0, graph 0.1, 0
set xtics rotate by -40 left noenhanced ("pthread" 0, "tas" 1, "glibc" 2, "ttas" 3, "backoff" 4, "clh-tp" 5, "clh-try" 6, "mcs-try" 7, "cal" 8, "cal-fp" 9, "mcs" 10, "alock" 11, "mcs-tp" 12, "clh-nb" 13, "mcs-nb" 14, "clh" 15, "ticket" 16)
set xrange [-0.7:16.700000]
set key off
set label 2 "above each bar: its median / glibc median (! noisy)" at graph 0.01, graph 0.97 left font ",9"
set boxwidth 0.7
set style fill border -1
set label 3 "1.04x" at 0, 637717 center offset 0, 0.8 font ",8" noenhanced
set label 4 "1.03x" at 1, 659796 center offset 0, 0.8 font ",8" noenhanced
set label 5 "1.00x" at 2, 640117 center offset 0, 0.8 font ",8" noenhanced
set label 6 "0.95x" at 3, 661616 center offset 0, 0.8 font ",8" noenhanced
set label 7 "0.85x" at 4, 608108 center offset 0, 0.8 font ",8" noenhanced
set label 8 "0.83x" at 5, 531966 center offset 0, 0.8 font ",8" noenhanced
set label 9 "0.78x" at 6, 475713 center offset 0, 0.8 font ",8" noenhanced
set label 10 "0.77x!" at 7, 476966 center offset 0, 0.8 font ",8" noenhanced
set label 11 "0.74x" at 8, 431958 center offset 0, 0.8 font ",8" noenhanced
set label 12 "0.74x" at 9, 451141 center offset 0, 0.8 font ",8" noenhanced
set label 13 "0.70x!" at 10, 435693 center offset 0, 0.8 font ",8" noenhanced
set label 14 "0.69x!" at 11, 501357 center offset 0, 0.8 font ",8" noenhanced
set label 15 "0.69x" at 12, 443337 center offset 0, 0.8 font ",8" noenhanced
set label 16 "0.48x!" at 13, 489366 center offset 0, 0.8 font ",8" noenhanced
set label 17 "0.35x!" at 14, 429112 center offset 0, 0.8 font ",8" noenhanced
set label 18 "0.24x!" at 15, 420400 center offset 0, 0.8 font ",8" noenhanced
set label 19 "0.20x!" at 16, 176463 center offset 0, 0.8 font ",8" noenhanced
plot "compare.dat" index 0 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#1f77b4" fs solid 0.6 title "pthread", \
     "compare.dat" index 1 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#ff7f0e" fs solid 0.6 title "tas", \
     "compare.dat" index 2 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "black" fs solid 0.35 title "glibc", \
     "compare.dat" index 3 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#2ca02c" fs solid 0.6 title "ttas", \
     "compare.dat" index 4 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#d62728" fs solid 0.6 title "backoff", \
     "compare.dat" index 5 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#8c564b" fs pattern 2 title "clh-tp", \
     "compare.dat" index 6 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#bcbd22" fs solid 0.6 title "clh-try", \
     "compare.dat" index 7 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#7b68ee" fs solid 0.6 title "mcs-try", \
     "compare.dat" index 8 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#2ca02c" fs pattern 2 title "cal", \
     "compare.dat" index 9 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#d62728" fs pattern 2 title "cal-fp", \
     "compare.dat" index 10 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#17becf" fs solid 0.6 title "mcs", \
     "compare.dat" index 11 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#8c564b" fs solid 0.6 title "alock", \
     "compare.dat" index 12 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#9467bd" fs pattern 2 title "mcs-tp", \
     "compare.dat" index 13 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#1f77b4" fs pattern 2 title "clh-nb", \
     "compare.dat" index 14 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#ff7f0e" fs pattern 2 title "mcs-nb", \
     "compare.dat" index 15 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#e377c2" fs solid 0.6 title "clh", \
     "compare.dat" index 16 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#9467bd" fs solid 0.6 title "ticket"
