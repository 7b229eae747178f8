"""Built-in runtimes (in_memory, http_inject) and the plugin registry that finds every runtime."""
