set terminal pngcairo size 1280,696 font ",11"
set output "compare.png"
# size 1280 696
reset
set title "/work/wt/auto/build/lockbench -t 16 -c 2 -N 1000 -d 0.5\n/throughput/ (higher is better): median, bars from min to max" noenhanced
set ylabel "throughput" noenhanced
set grid ytics
set bmargin 11
set label 101 "! noisy: its runs spread more than 1.5x (max/min)" at graph 0, graph 0 offset 0, -9 left font ",9" noenhanced textcolor rgb "red"
set logscale y
set xtics rotate by -40 left noenhanced ("tas" 0, "clh-tp" 1, "auto" 2, "pthread" 3, "glibc" 4, "mcs-tp" 5, "backoff" 6, "ticket" 7, "ttas" 8, "mcs-nb" 9, "cal-fp" 10, "cal" 11, "mcs" 12, "mcs-try" 13, "alock" 14, "clh" 15, "clh-nb" 16, "clh-try" 17)
set xrange [-0.7:17.700000]
set key off
set label 2 "above each bar: its median / glibc median (! noisy)" at graph 0.01, graph 0.97 left font ",9"
set boxwidth 0.7
set style fill border -1
set label 3 "1.22x!" at 0, 986506 center offset 0, 0.8 font ",8" noenhanced
set label 4 "1.06x!" at 1, 972483 center offset 0, 0.8 font ",8" noenhanced
set label 5 "1.06x" at 2, 685862 center offset 0, 0.8 font ",8" noenhanced
set label 6 "1.04x!" at 3, 729792 center offset 0, 0.8 font ",8" noenhanced
set label 7 "1.00x!" at 4, 679037 center offset 0, 0.8 font ",8" noenhanced
set label 8 "1.00x" at 5, 687201 center offset 0, 0.8 font ",8" noenhanced
set label 9 "0.99x!" at 6, 684362 center offset 0, 0.8 font ",8" noenhanced
set label 10 "0.97x!" at 7, 726843 center offset 0, 0.8 font ",8" noenhanced
set label 11 "0.97x!" at 8, 968081 center offset 0, 0.8 font ",8" noenhanced
set label 12 "0.94x!" at 9, 725352 center offset 0, 0.8 font ",8" noenhanced
set label 13 "0.74x!" at 10, 664246 center offset 0, 0.8 font ",8" noenhanced
set label 14 "0.55x!" at 11, 675451 center offset 0, 0.8 font ",8" noenhanced
set label 15 "0.54x!" at 12, 663535 center offset 0, 0.8 font ",8" noenhanced
set label 16 "0.40x!" at 13, 447820 center offset 0, 0.8 font ",8" noenhanced
set label 17 "0.38x!" at 14, 458345 center offset 0, 0.8 font ",8" noenhanced
set label 18 "0.34x!" at 15, 517644 center offset 0, 0.8 font ",8" noenhanced
set label 19 "0.31x!" at 16, 699756 center offset 0, 0.8 font ",8" noenhanced
set label 20 "0.18x" at 17, 126551 center offset 0, 0.8 font ",8" noenhanced
plot "compare.dat" index 0 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#2ca02c" fs solid 0.6 title "tas", \
     "compare.dat" index 1 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#e377c2" fs pattern 2 title "clh-tp", \
     "compare.dat" index 2 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#ff7f0e" fs solid 0.6 title "auto", \
     "compare.dat" index 3 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#1f77b4" fs solid 0.6 title "pthread", \
     "compare.dat" index 4 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "black" fs solid 0.35 title "glibc", \
     "compare.dat" index 5 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#8c564b" fs pattern 2 title "mcs-tp", \
     "compare.dat" index 6 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#9467bd" fs solid 0.6 title "backoff", \
     "compare.dat" index 7 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#8c564b" fs solid 0.6 title "ticket", \
     "compare.dat" index 8 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#d62728" fs solid 0.6 title "ttas", \
     "compare.dat" index 9 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#2ca02c" fs pattern 2 title "mcs-nb", \
     "compare.dat" index 10 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#9467bd" fs pattern 2 title "cal-fp", \
     "compare.dat" index 11 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#d62728" fs pattern 2 title "cal", \
     "compare.dat" index 12 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#bcbd22" fs solid 0.6 title "mcs", \
     "compare.dat" index 13 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#1f77b4" fs pattern 2 title "mcs-try", \
     "compare.dat" index 14 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#e377c2" fs solid 0.6 title "alock", \
     "compare.dat" index 15 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#17becf" fs solid 0.6 title "clh", \
     "compare.dat" index 16 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#ff7f0e" fs pattern 2 title "clh-nb", \
     "compare.dat" index 17 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#7b68ee" fs solid 0.6 title "clh-try"
