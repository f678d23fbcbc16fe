set terminal pngcairo size 1000,636 font ",11"
set output "barnes-plummer-262144.png"
# size 1000 636
reset
set title "barnes plummer-262144\nwall time in s (lower is better): median, bars from min to max" noenhanced
set ylabel "wall time (s)" noenhanced
set grid ytics
set bmargin 7
set label 101 "! noisy: its runs spread more than 1.5x (max/min)" at graph 0, graph 0 offset 0, -5 left font ",9" noenhanced textcolor rgb "red"
set logscale y
set label 4 "!" at -0.0750, 9.901 left offset 0.6, 0 font ",10" textcolor rgb "red"
set label 5 "!" at 0.9250, 11.86 left offset 0.6, 0 font ",10" textcolor rgb "red"
set label 6 "!" at 1.9250, 17.306 left offset 0.6, 0 font ",10" textcolor rgb "red"
set label 7 "!" at 2.9250, 17.022 left offset 0.6, 0 font ",10" textcolor rgb "red"
set label 8 "!" at -0.0450, 10.565 left offset 0.6, 0 font ",10" textcolor rgb "red"
set label 9 "!" at 0.9550, 10.722 left offset 0.6, 0 font ",10" textcolor rgb "red"
set label 10 "!" at 1.9550, 22.574 left offset 0.6, 0 font ",10" textcolor rgb "red"
set label 11 "!" at 2.9550, 17.65 left offset 0.6, 0 font ",10" textcolor rgb "red"
set label 12 "!" at -0.0150, 8.196 left offset 0.6, 0 font ",10" textcolor rgb "red"
set label 13 "!" at 0.9850, 10.941 left offset 0.6, 0 font ",10" textcolor rgb "red"
set label 14 "!" at 1.9850, 19.795 left offset 0.6, 0 font ",10" textcolor rgb "red"
set label 15 "!" at 2.9850, 15.988 left offset 0.6, 0 font ",10" textcolor rgb "red"
set label 16 "!" at 0.0150, 10.651 left offset 0.6, 0 font ",10" textcolor rgb "red"
set label 17 "!" at 1.0150, 20.678 left offset 0.6, 0 font ",10" textcolor rgb "red"
set label 18 "!" at 2.0150, 32.837 left offset 0.6, 0 font ",10" textcolor rgb "red"
set label 19 "!" at 3.0150, 56.14 left offset 0.6, 0 font ",10" textcolor rgb "red"
set label 20 "!" at 0.0450, 12.488 left offset 0.6, 0 font ",10" textcolor rgb "red"
set label 21 "!" at 1.0450, 14.476 left offset 0.6, 0 font ",10" textcolor rgb "red"
set label 22 "!" at 2.0450, 18.587 left offset 0.6, 0 font ",10" textcolor rgb "red"
set label 23 "!" at 3.0450, 16.908 left offset 0.6, 0 font ",10" textcolor rgb "red"
set label 24 "!" at 0.0750, 17.389 left offset 0.6, 0 font ",10" textcolor rgb "red"
set label 25 "!" at 1.0750, 16.196 left offset 0.6, 0 font ",10" textcolor rgb "red"
set label 26 "!" at 2.0750, 16.01 left offset 0.6, 0 font ",10" textcolor rgb "red"
set label 27 "!" at 3.0750, 21.389 left offset 0.6, 0 font ",10" textcolor rgb "red"
set xtics ("1.0" 0, "2.0" 1, "2.1" 2, "2.2" 3)
set xrange [-0.5:3.500000]
set xlabel "configuration M.N: M application threads, N load processes"
set key outside right top noenhanced
plot "barnes-plummer-262144.dat" index 0 using 1:2:3:4 with yerrorlines lc rgb "black" dt 1 pt 7 lw 3 title "glibc", \
     "barnes-plummer-262144.dat" index 1 using 1:2:3:4 with yerrorlines lc rgb "#1f77b4" dt 1 pt 1 lw 2 title "pthread", \
     "barnes-plummer-262144.dat" index 2 using 1:2:3:4 with yerrorlines lc rgb "#ff7f0e" dt 1 pt 2 lw 2 title "tas/yield", \
     "barnes-plummer-262144.dat" index 3 using 1:2:3:4 with yerrorlines lc rgb "#2ca02c" dt 1 pt 3 lw 2 title "mcs", \
     "barnes-plummer-262144.dat" index 4 using 1:2:3:4 with yerrorlines lc rgb "#d62728" dt 1 pt 4 lw 2 title "mcs-tp", \
     "barnes-plummer-262144.dat" index 5 using 1:2:3:4 with yerrorlines lc rgb "#9467bd" dt 1 pt 5 lw 2 title "clh-tp"
