"""Checks made before work starts, so that a mistake fails in a second, not 15 s into a stage.

    preflight.py  a config checked against this machine: datasets, prompts, model, device,
                  sandbox, plug-ins, disk
    start.py      create_or_open: a new run is preflighted before its folder exists
    doctor.py     `rlvr doctor`: which engines, devices and sandbox this machine offers

Test: tests/unit/checks/test_preflight.py.
"""
