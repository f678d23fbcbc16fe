set terminal pngcairo size 1000,732 font ",11"
set output "raytrace-car-800x800.png"
# size 1000 732
reset
set title "raytrace car-800x800, M.N 2.2\nwall time in s (lower is better): median, bars from min to max" noenhanced
set ylabel "wall time (s)" noenhanced
set grid ytics
set bmargin 13
set label 101 "! noisy: its runs spread more than 1.5x (max/min)" at graph 0, graph 0 offset 0, -9 left font ",9" noenhanced textcolor rgb "red"
set label 102 "> a lower bound: the run was stopped at its time limit (over-limit)" at graph 0, graph 0 offset 0, -10 left font ",9" noenhanced textcolor rgb "red"
set label 103 "not ok: mcs (0/3 ok; 1 over-limit; 2 skipped)" at graph 0, graph 0 offset 0, -11 left font ",9" noenhanced
set yrange [0:*]; set offsets 0, 0, graph 0.1, 0
set xtics rotate by -40 left noenhanced ("mutexee" 0, "shfl" 1, "mcs-tp" 2, "glibc" 3, "clh-tp" 4, "ptl" 5, "clh" 6, "hemlock" 7, "malthusian" 8, "ticket" 9, "mcs" 10)
set xrange [-0.7:10.700000]
set key off
set label 2 "above each bar: its median / glibc median (! noisy)" at graph 0.01, graph 0.97 left font ",9"
set boxwidth 0.7
set style fill border -1
set label 3 "0.80x" at 0, 5.921 center offset 0, 0.8 font ",8" noenhanced
set label 4 "0.88x" at 1, 9.069 center offset 0, 0.8 font ",8" noenhanced
set label 5 "0.99x!" at 2, 14.518 center offset 0, 0.8 font ",8" noenhanced
set label 6 "1.00x!" at 3, 10.048 center offset 0, 0.8 font ",8" noenhanced
set label 7 "1.07x" at 4, 9.635 center offset 0, 0.8 font ",8" noenhanced
set label 8 "4.51x!" at 5, 62.9 center offset 0, 0.8 font ",8" noenhanced
set label 9 "6.46x!" at 6, 83.181 center offset 0, 0.8 font ",8" noenhanced
set label 10 "6.51x" at 7, 55.363 center offset 0, 0.8 font ",8" noenhanced
set label 11 "7.54x" at 8, 61.585 center offset 0, 0.8 font ",8" noenhanced
set label 12 "8.88x!" at 9, 77.084 center offset 0, 0.8 font ",8" noenhanced
set label 13 ">13.80x" at 10, 101.369 center offset 0, 0.8 font ",8" noenhanced
plot "raytrace-car-800x800.dat" index 0 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#e377c2" fs solid 0.6 title "mutexee", \
     "raytrace-car-800x800.dat" index 1 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#17becf" fs solid 0.6 title "shfl", \
     "raytrace-car-800x800.dat" index 2 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#d62728" fs solid 0.6 title "mcs-tp", \
     "raytrace-car-800x800.dat" index 3 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "black" fs solid 0.35 title "glibc", \
     "raytrace-car-800x800.dat" index 4 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#9467bd" fs solid 0.6 title "clh-tp", \
     "raytrace-car-800x800.dat" index 5 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#7b68ee" fs solid 0.6 title "ptl", \
     "raytrace-car-800x800.dat" index 6 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#ff7f0e" fs solid 0.6 title "clh", \
     "raytrace-car-800x800.dat" index 7 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#bcbd22" fs solid 0.6 title "hemlock", \
     "raytrace-car-800x800.dat" index 8 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#8c564b" fs solid 0.6 title "malthusian", \
     "raytrace-car-800x800.dat" index 9 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#1f77b4" fs solid 0.6 title "ticket", \
     "raytrace-car-800x800.dat" index 10 using 1:2:3:4:(0.7) with boxerrorbars lc rgb "#2ca02c" fs solid 0.6 title "mcs"
