from officehub.cli import main

main()
