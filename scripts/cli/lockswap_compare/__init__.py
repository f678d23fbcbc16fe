"""The matrix engine behind `lockswap compare` and splash2-runner/splash2-run.

A matrix is groups (one configuration of the program: folder, command, stdin,
load processes, output check) x series (glibc natively, or the program under
`lockswap` with an algorithm and a waiting policy) x repetitions, run
interleaved: repetition 1 of every cell, then repetition 2, so that the drifts
of a noisy machine spread over every cell. The modules, each with its own unit
tests (tests/compare-unit/):

  util     messages, errors, number parsing, durations, shell quoting
  series   the columns of the matrix: algorithm names (opaque, passed to
           `lockswap -a` as they are), waiting policies, the axes of a series
  procs    processes: spawning, /proc (process trees, CPU ticks, states),
           killing a tree, load processes
  limits   the time limit of a run and the hang detector (fed /proc samples)
  runner   one run: start, watch, stop, status and times
  checks   output checks (sha256 of stdout, a file or a folder) and --metric
  csvio    results.csv and summary.csv, read and written
  stats    medians, spread, ranking: summary.csv from results.csv
  table    summary.txt from summary.csv
  plots    gnuplot scripts and PNGs from summary.csv
  engine   the matrix: reference runs, the interleaved loop, progress, report
  cli      `lockswap compare`: options, usage, the matrix of one program

Only the standard library of Debian's python3; the start-up path (cli, util)
imports nothing that is slow to load, and the rest is imported before the
first run, so that a rebuilt zip cannot change under a long run.
"""
