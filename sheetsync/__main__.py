from sheetsync.app.entry import main

main()
