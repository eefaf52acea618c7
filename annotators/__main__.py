from annotators.cli import main

main()
