from simcli.cli.app import main

main()
