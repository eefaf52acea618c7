def register(store) -> None:
    pass
