from scope.cli.main import entry

entry()
