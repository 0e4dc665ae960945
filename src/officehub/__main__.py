from officehub.cli import app

app()
