from sheetsync.app.cli import main

main()
