set terminal pngcairo size 1280,696 font ",11"
set output "compare.png"
# size 1280 696
reset
set title "/work/wt/auto/build/lockbench -t 4 -c 2 -N 1000 -d 0.5\n/throughput/ (higher is better): median, bars from min to max" noenhanced
set ylabel "throughput" noenhanced
set grid ytics
set bmargin 11
set label 101 "! noisy: its runs spread more than 1.5x (max/min)" at graph 0, graph 0 offset 0, -9 left font ",9" noenhanced textcolor rgb "red"
set logscale y
set xtics rotate by -40 left noenhanced ("clh-tp" 0, "auto" 1, "cal" 2, "ttas" 3, "pthread" 4, "cal-fp" 5, "glibc" 6, "tas" 7, "mcs-tp" 8, "backoff" 9, "mcs-try" 10, "ticket" 11, "clh-try" 12, "mcs" 13, "clh-nb" 14, "alock" 15, "mcs-nb" 16, "clh" 17)
set xrange [-0.7:17.700000]
set key off
set label 2 "above each bar: its median / glibc median (! noisy)" at graph 0.01, graph 0.97 left font ",9"
set boxwidth 0.7
set style fill border -1
set label 3 "1.15x!" at 0, 748360 center offset 0, 0.8 font ",8" noenhanced
set label 4 "1.13x" at 1, 711378 center offset 0, 0.8 font ",8" noenhanced
set label 5 "1.11x" at 2, 630383 center offset 0, 0.8 font ",8" noenhanced
set label 6 "1.09x" at 3, 632813 center offset 0, 0.8 font ",8" noenhanced
set label 7 "1.05x" at 4, 683481 center offset 0, 0.8 font ",8" noenhanced
set label 8 "1.05x" at 5, 646162 center offset 0, 0.8 font ",8" noenhanced
set label 9 "1.00x!" at 6, 1312761 center offset 0, 0.8 font ",8" noenhanced
set label 10 "0.97x" at 7, 580339 center offset 0, 0.8 font ",8" noenhanced
set label 11 "0.91x" at 8, 568323 center offset 0, 0.8 font ",8" noenhanced
set label 12 "0.87x!" at 9, 610136 center offset 0, 0.8 font ",8" noenhanced
set label 13 "0.81x!" at 10, 776825 center offset 0, 0.8 font ",8" noenhanced
set label 14 "0.50x!" at 11, 418966 center offset 0, 0.8 font ",8" noenhanced
set label 15 "0.37x!" at 12, 555234 center offset 0, 0.8 font ",8" noenhanced
set label 16 "0.18x!" at 13, 118288 center offset 0, 0.8 font ",8" noenhanced
set label 17 "0.18x" at 14, 127174 center offset 0, 0.8 font ",8" noenhanced
set label 18 "0.18x!" at 15, 249924 center offset 0, 0.8 font ",8" noenhanced
set label 19 "0.17x!" at 16, 132799 center offset 0, 0.8 font ",8" noenhanced
set label 20 "0.15x!" at 17, 432344 center offset 0, 0.8 font ",8" noenhanced
plot "compare.dat" index 0 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#e377c2" fs pattern 2 title "clh-tp", \
     "compare.dat" index 1 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#ff7f0e" fs solid 0.6 title "auto", \
     "compare.dat" index 2 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#d62728" fs pattern 2 title "cal", \
     "compare.dat" index 3 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#d62728" fs solid 0.6 title "ttas", \
     "compare.dat" index 4 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#1f77b4" fs solid 0.6 title "pthread", \
     "compare.dat" index 5 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#9467bd" fs pattern 2 title "cal-fp", \
     "compare.dat" index 6 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "black" fs solid 0.35 title "glibc", \
     "compare.dat" index 7 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#2ca02c" fs solid 0.6 title "tas", \
     "compare.dat" index 8 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#8c564b" fs pattern 2 title "mcs-tp", \
     "compare.dat" index 9 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#9467bd" fs solid 0.6 title "backoff", \
     "compare.dat" index 10 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#1f77b4" fs pattern 2 title "mcs-try", \
     "compare.dat" index 11 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#8c564b" fs solid 0.6 title "ticket", \
     "compare.dat" index 12 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#7b68ee" fs solid 0.6 title "clh-try", \
     "compare.dat" index 13 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#bcbd22" fs solid 0.6 title "mcs", \
     "compare.dat" index 14 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#ff7f0e" fs pattern 2 title "clh-nb", \
     "compare.dat" index 15 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#e377c2" fs solid 0.6 title "alock", \
     "compare.dat" index 16 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#2ca02c" fs pattern 2 title "mcs-nb", \
     "compare.dat" index 17 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#17becf" fs solid 0.6 title "clh"
