# stand-in scene: sphere X Y Z RADIUS (unit square image plane, camera looking down -z)
sphere 0.30 0.40 -2.0 0.25
sphere 0.65 0.55 -3.0 0.30
sphere 0.50 0.20 -1.5 0.12
