/// The nginx.conf of one `NginxOrigin`: everything (pid, logs, temp paths) inside `prefix`, one listener on
/// 127.0.0.1:`port`, files from `root`, `/slow/<path>` serving `root/<path>` at `?rate=` bytes per second, `PUT
/// /upload/<path>` writing `root/upload/<path>` (WebDAV), and `/refuse-upload/` answering 403.
struct NginxConfiguration: Equatable {
    var prefix: String
    var root: String
    var port: Int
    /// nginx started as root drops to `nobody` for its workers unless told otherwise.
    var runAsRoot: Bool

    /// Access log fields, tab-separated; nginx escapes `"`, `\` and bytes outside 0x20...0x7e as `\xHH`.
    static let logFields = [
        "$request_method", "$uri", "$status", "$http_range", "$http_if_range", "$body_bytes_sent", "$request_uri",
    ]

    var text: String {
        let format = Self.logFields.joined(separator: "\\t")
        return """
            daemon off;
            master_process on;
            worker_processes 1;
            \(runAsRoot ? "user root root;" : "")
            pid \(quoted(prefix + "/nginx.pid"));
            error_log \(quoted(prefix + "/error.log")) warn;
            events { worker_connections 256; }
            http {
                default_type application/octet-stream;
                types { text/plain txt; text/html html; application/json json; application/octet-stream bin; }
                log_format ferry "\(format)";
                access_log \(quoted(prefix + "/access.log")) ferry;
                sendfile on;
                etag on;
                keepalive_timeout 30s;
                client_body_temp_path \(quoted(prefix + "/temp/client_body"));
                proxy_temp_path \(quoted(prefix + "/temp/proxy"));
                fastcgi_temp_path \(quoted(prefix + "/temp/fastcgi"));
                uwsgi_temp_path \(quoted(prefix + "/temp/uwsgi"));
                scgi_temp_path \(quoted(prefix + "/temp/scgi"));
                map $arg_rate $ferry_rate { default $arg_rate; "" 0; }
                server {
                    listen 127.0.0.1:\(port);
                    server_name localhost;
                    root \(quoted(root));
                    location / { }
                    # Upload targets for onward delivery: WebDAV PUT into root/upload/, and a target that refuses.
                    location /upload/ {
                        dav_methods PUT;
                        create_full_put_path on;
                        client_max_body_size 0;
                    }
                    location /refuse-upload/ { return 403; }
                    location /slow/ {
                        alias \(quoted(root + "/"));
                        limit_rate $ferry_rate;
                    }
                }
            }

            """
    }

    private func quoted(_ path: String) -> String {
        "\"" + path.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }
}
