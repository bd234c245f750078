"""The results hub (issue 53): a web service that keeps the runs clusters push (app.py, db.py),
and the client that pushes them (client.py: only what scope already installs)."""
