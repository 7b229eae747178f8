"""The reset canary: does reset_state() really isolate runs?"""
