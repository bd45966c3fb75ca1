/**
 * Debian's interpreter, where Debian's Python packages (python3-grpcio, python3-grpc-tools) install: the python3
 * first on PATH may be another one without them.
 */
export const DEBIAN_PYTHON = "/usr/bin/python3";
