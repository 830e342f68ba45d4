"""The command line: everything only `yield` needs (app, argv, completion, session, errors to exit codes,
commands, render)."""
