from yieldcli.app import main

main()
