from forge_server.cli import main

main()
