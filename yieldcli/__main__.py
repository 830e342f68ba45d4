from yieldcli.cli.entry import main

main()
