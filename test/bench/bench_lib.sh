# Shell pieces both benchmark scripts use (sourced by test/bench/run.sh and
# test/bench/callgrind_small_get.sh): waiting for a log line, and nginx as the plain-proxy
# baseline in front of the fake apiserver. scripts/pgo_train.sh waits for log lines with it too.

# wait_log FILE REGEX [SECONDS]: prints the first capture group once the line appears in FILE
# (default: wait up to 10 s); exits the script if it never does.
wait_log() {
  local deadline=$(( $(date +%s) + ${3:-10} ))
  while (( $(date +%s) <= deadline )); do
    if [[ $(cat "$1" 2>/dev/null) =~ $2 ]]; then echo "${BASH_REMATCH[1]}"; return 0; fi
    sleep 0.05
  done
  echo "bench: timed out waiting for '$2' in $1" >&2; cat "$1" >&2; exit 1
}

# write_nginx_conf WORK API_PORT LISTEN_PORT [MAIN_DIRECTIVE...]: writes WORK/nginx.conf, one
# worker proxying 127.0.0.1:LISTEN_PORT to the fake apiserver with upstream keep-alive and the
# hub's client certificate (WORK/pki), as the hub itself does. Extra main-context directives
# (e.g. "master_process off;") are added as given.
write_nginx_conf() {
  local work=$1 api_port=$2 listen_port=$3; shift 3
  mkdir -p "$work/nginx"
  {
    echo "worker_processes 1;"
    for directive in "$@"; do echo "$directive"; done
    cat <<NGINX
daemon off;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $work/nginx/body;
  proxy_temp_path $work/nginx/proxy;
  # Buffers in memory only, streaming like the hub: a response bigger than its buffers is never
  # spilled to a temporary file (which its worker, run as nobody, cannot create in this root-owned
  # directory: the 19 MiB list came back cut short, and fast, in most rounds).
  proxy_max_temp_file_size 0;
  upstream apiserver { server 127.0.0.1:$api_port; keepalive 64; }
  server {
    listen 127.0.0.1:$listen_port;
    location / {
      proxy_pass https://apiserver;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_ssl_certificate $work/pki/hub-client.crt;
      proxy_ssl_certificate_key $work/pki/hub-client.key;
      proxy_ssl_trusted_certificate $work/pki/ca.crt;
      proxy_ssl_verify on;
      proxy_ssl_name localhost;  # nginx matches DNS names, not IP SANs
      proxy_ssl_session_reuse off;  # resumed sessions fail now and then against the fake (alert 80)
    }
  }
}
NGINX
  } >"$work/nginx.conf"
}
