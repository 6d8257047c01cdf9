"""The faults suite: the agent under what production does to it (bad options, full or vanished
disks, noexec mounts, SIGKILL at any moment, planted symlinks, load). See README.md here."""
