"""What an operator's benchmark needs beyond its record (operators/<op>.py: torch's peer, FLOPs):
a module here only where it draws its own inputs (matmul: shapes are (M, N, K))."""
