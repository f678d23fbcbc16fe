# stand-in scene: sphere X Y Z RADIUS
sphere 0.50 0.50 -2.0 0.35
sphere 0.20 0.80 -1.0 0.10
