from yieldcli.entry import main

main()
