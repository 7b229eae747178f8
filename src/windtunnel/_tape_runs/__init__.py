"""Tapes through containers: recording a tape from a runtime run (`wt tapes record`), and the stacks that replay one."""
