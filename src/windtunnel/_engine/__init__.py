"""The Docker plumbing every container-backed driver stands on: engine client, images, networks, files, fences."""
