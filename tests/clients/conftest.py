# The programs run in subprocesses (test_clients.py), never inside pytest: importing one
# here would run it, and the shim would replace torch for the whole session.
collect_ignore = ["programs", "shim"]
