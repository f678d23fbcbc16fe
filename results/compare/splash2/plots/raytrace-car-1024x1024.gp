set terminal pngcairo size 1000,672 font ",11"
set output "raytrace-car-1024x1024.png"
# size 1000 672
reset
set title "raytrace car-1024x1024\nwall time in s (lower is better): median, bars from min to max" noenhanced
set ylabel "wall time (s)" noenhanced
set grid ytics
set bmargin 9
set label 101 "! noisy: its runs spread more than 1.5x (max/min)" at graph 0, graph 0 offset 0, -5 left font ",9" noenhanced textcolor rgb "red"
set label 102 "> a lower bound: the run was stopped at its time limit (over-limit)" at graph 0, graph 0 offset 0, -6 left font ",9" noenhanced textcolor rgb "red"
set label 103 "not ok: mcs at 2.2 (0/3 ok; 1 over-limit; 2 skipped)" at graph 0, graph 0 offset 0, -7 left font ",9" noenhanced
set logscale y
set label 4 "!" at -0.0750, 9.176 left offset 0.6, 0 font ",10" textcolor rgb "red"
set label 5 "!" at 1.9250, 12.076 left offset 0.6, 0 font ",10" textcolor rgb "red"
set label 6 "!" at 2.9250, 27.089 left offset 0.6, 0 font ",10" textcolor rgb "red"
set label 7 "!" at -0.0450, 7.495 left offset 0.6, 0 font ",10" textcolor rgb "red"
set label 8 "!" at 1.9550, 15.402 left offset 0.6, 0 font ",10" textcolor rgb "red"
set label 9 "!" at 2.9550, 23.439 left offset 0.6, 0 font ",10" textcolor rgb "red"
set label 10 "!" at -0.0150, 7.467 left offset 0.6, 0 font ",10" textcolor rgb "red"
set label 11 "!" at 0.9850, 12.9 left offset 0.6, 0 font ",10" textcolor rgb "red"
set label 12 "!" at 1.9850, 16.107 left offset 0.6, 0 font ",10" textcolor rgb "red"
set label 13 "!" at 2.9850, 19.162 left offset 0.6, 0 font ",10" textcolor rgb "red"
set label 14 "!" at 0.0150, 10.654 left offset 0.6, 0 font ",10" textcolor rgb "red"
set label 15 "!" at 1.0150, 15.142 left offset 0.6, 0 font ",10" textcolor rgb "red"
set label 16 "!" at 2.0150, 63.88 left offset 0.6, 0 font ",10" textcolor rgb "red"
set label 17 ">" at 3.0150, 302.613 right offset -0.6, 0 font ",10"
set label 18 "!" at 0.0450, 8.026 left offset 0.6, 0 font ",10" textcolor rgb "red"
set label 19 "!" at 1.0450, 11.533 left offset 0.6, 0 font ",10" textcolor rgb "red"
set label 20 "!" at 2.0450, 12.085 left offset 0.6, 0 font ",10" textcolor rgb "red"
set label 21 "!" at 3.0450, 25.848 left offset 0.6, 0 font ",10" textcolor rgb "red"
set label 22 "!" at 2.0750, 16.796 left offset 0.6, 0 font ",10" textcolor rgb "red"
set label 23 "!" at 3.0750, 27.073 left offset 0.6, 0 font ",10" textcolor rgb "red"
set xtics ("1.0" 0, "2.0" 1, "2.1" 2, "2.2" 3)
set xrange [-0.5:3.500000]
set xlabel "configuration M.N: M application threads, N load processes"
set key outside right top noenhanced
plot "raytrace-car-1024x1024.dat" index 0 using 1:2:3:4 with yerrorlines lc rgb "black" dt 1 pt 7 lw 3 title "glibc", \
     "raytrace-car-1024x1024.dat" index 1 using 1:2:3:4 with yerrorlines lc rgb "#1f77b4" dt 1 pt 1 lw 2 title "pthread", \
     "raytrace-car-1024x1024.dat" index 2 using 1:2:3:4 with yerrorlines lc rgb "#ff7f0e" dt 1 pt 2 lw 2 title "tas/yield", \
     "raytrace-car-1024x1024.dat" index 3 using 1:2:3:4 with yerrorlines lc rgb "#2ca02c" dt 1 pt 3 lw 2 title "mcs", \
     "raytrace-car-1024x1024.dat" index 4 using 1:2:3:4 with yerrorlines lc rgb "#d62728" dt 1 pt 4 lw 2 title "mcs-tp", \
     "raytrace-car-1024x1024.dat" index 5 using 1:2:3:4 with yerrorlines lc rgb "#9467bd" dt 1 pt 5 lw 2 title "clh-tp"
