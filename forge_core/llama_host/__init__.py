"""The llama host: a llama-server child process Forge starts, supervises and
stops (process.py), the bundled binary and model it starts by default
(install.py), why a start failed (startup.py, failures.py, cpu_features.py),
which device runs the model (devices.py, hardware.py), and the children a
killed Forge left behind (orphans.py).

The backend that talks to a llama-server, started here or not, lives in
forge_core/backends/.
"""
