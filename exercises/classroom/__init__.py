"""The classroom: the course served by JupyterHub, one server per student (hub.py,
jupyterhub_config.py), and the same course on Kubernetes with Zero to JupyterHub
(z2jh/config.yaml, docs/teaching.md)."""
