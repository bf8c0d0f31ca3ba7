from memorypr_mcp.server import main

main()
