# Source this to put the Node 24 installed by scripts/setup-host.sh first on PATH.
SVC_NODE_DIR="${SVC_TOOLS_CACHE:-$HOME/.cache/svc-platform}/node-v24"
export PATH="$SVC_NODE_DIR/bin:$PATH"
# Native addons compile against Node 24's headers, not the machine's Node.
export npm_config_nodedir="$SVC_NODE_DIR"
