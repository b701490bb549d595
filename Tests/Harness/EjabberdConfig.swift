// The files one test ejabberd node runs from: ejabberd.yml (MQTT only, no XMPP listener) and
// ejabberdctl.cfg (node name, cookie, private epmd, loopback-only distribution).
//
// Choices (see /work/shared/reference/mqtt-cluster.md for the measurements behind them):
// - Cars authenticate by TLS client certificate: mod_mqtt takes a CONNECT with an empty
//   password only on a tls_verify listener, and only when the certificate's CN equals the
//   client id (no user name). Anonymous auth does not help a car without a user name: an empty
//   password never reaches the auth backends, so plain mqtt:// refuses it with 0x87.
// - Back-end clients use user name + password from the internal (mnesia) table, so in a
//   cluster a user registered once is known on every node.
// - session_expiry caps what a client asks for; the capped value comes back in CONNACK.

struct EjabberdConfig {
    var mqttPort: Int32
    var mqttsPort: Int32
    var certificateFile: String  // server certificate and key, PEM, one file
    var caFile: String           // verifies client certificates
    var sessionExpiry: String
    var access: EjabberdAccess
    var logLevel = "info"

    var yaml: String {
        var text = """
            ## Written by the OpenCarKey test harness: one MQTT-only ejabberd node on loopback.
            hosts:
              - localhost
            loglevel: \(logLevel)
            log_rotate_count: 0
            hide_sensitive_log_data: true
            certfiles:
              - "\(certificateFile)"
            c2s_cafile: "\(caFile)"
            acme:
              auto: false
            listen:
              -
                port: \(mqttPort)
                ip: "127.0.0.1"
                module: mod_mqtt
                backlog: 1000
              -
                port: \(mqttsPort)
                ip: "127.0.0.1"
                module: mod_mqtt
                backlog: 1000
                tls: true
                tls_verify: true
            auth_method: internal
            auth_password_format: plain
            acl:
              admin:
                user: admin@localhost

            """
        for (index, who) in access.principals.enumerated() {
            text += "  \(Self.aclName(who, index: index)):\n"
            switch who {
            case .user(let name): text += "    user: \(name)@localhost\n"
            case .clientID(let id): text += "    resource: \"\(id)\"\n"
            case .all: break
            }
        }
        text += """
            access_rules:
              local:
                allow: all
            modules:
              mod_mqtt:
                session_expiry: \(sessionExpiry)
                max_queue: 5000
                queue_type: ram

            """
        text += rulesYAML("access_publish", access.publish)
        text += rulesYAML("access_subscribe", access.subscribe)
        return text
    }

    private func rulesYAML(_ key: String, _ rules: [EjabberdAccess.Rule]) -> String {
        guard !rules.isEmpty else { return "" }
        var text = "    \(key):\n"
        for rule in rules {
            text += "      \"\(rule.filter)\":\n"
            for decision in rule.decisions {
                switch decision {
                case .allow(let who): text += "        - allow: \(name(who))\n"
                case .deny(let who): text += "        - deny: \(name(who))\n"
                }
            }
        }
        return text
    }

    private func name(_ who: EjabberdAccess.Who) -> String {
        guard who != .all, let index = access.principals.firstIndex(of: who) else { return "all" }
        return Self.aclName(who, index: index)
    }

    private static func aclName(_ who: EjabberdAccess.Who, index: Int) -> String {
        switch who {
        case .all: return "all"
        case .user: return "test_user_\(index)"
        case .clientID: return "test_client_\(index)"
        }
    }

    /// ejabberdctl.cfg: sourced by the ejabberdctl script for every start and every command.
    static func controlConfig(node: String, cookie: String, epmdPort: Int32, folder: String) -> String {
        """
        ## Written by the OpenCarKey test harness.
        ERLANG_NODE=\(node)
        ## Own cookie; distribution only on loopback; no crash dumps in the run folder.
        ERL_OPTIONS="-setcookie \(cookie) -kernel inet_dist_use_interface {127,0,0,1} -env ERL_CRASH_DUMP_BYTES 0"
        ## The cluster's private epmd (started by the harness), never the system one on 4369.
        export ERL_EPMD_PORT=\(epmdPort)
        export ERL_EPMD_ADDRESS=127.0.0.1
        EJABBERD_BYPASS_WARNINGS=true
        CONTRIB_MODULES_PATH=\(folder)/contrib
        CONTRIB_MODULES_CONF_DIR=\(folder)/contrib
        """
    }
}
