"""The gui suite: KDAB Hotspot (Debian's hotspot 1.3) under Xvfb opening a perf-java recording of
the bundled demo through scripts/bin/hotspot-view, checked on the data Hotspot's own parser hands to
the GUI. Needs perf sampling (root), hotspot, xvfb, x11-utils and imagemagick; a missing one
fails the test naming the package."""
