print("eventlog")
