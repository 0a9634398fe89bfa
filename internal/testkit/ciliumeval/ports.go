package ciliumeval

import (
	"fmt"
	"slices"
	"strconv"
)

// Protocols of a Flow. Cilium's port rules match TCP, UDP and SCTP (ANY, or
// no protocol, is the three); ICMP has no ports and is matched only by a
// rule without toPorts (or by icmps, which this package does not model).
const (
	TCP  = "TCP"
	UDP  = "UDP"
	SCTP = "SCTP"
	ICMP = "ICMP"
)

// Flow is what a connection uses: a protocol and, for TCP, UDP and SCTP, the
// destination port (1..65535) as the destination pod sees it, after any
// Service translation, which is what Cilium's policy sees.
type Flow struct {
	Protocol string
	Port     int
}

// Port returns a flow of protocol to port.
func Port(protocol string, port int) Flow { return Flow{Protocol: protocol, Port: port} }

// String writes the flow as port/protocol.
func (f Flow) String() string {
	if f.Protocol == ICMP {
		return "icmp"
	}
	return fmt.Sprintf("%d/%s", f.Port, f.Protocol)
}

// portRange is one entry of a rule's toPorts: ports From..To (0..0 for any
// port) of the listed protocols.
type portRange struct {
	protocols []string
	from, to  int
}

// maxPorts is the most ports a toPorts entry may list (Cilium's
// PortRule sanitizer refuses more).
const maxPorts = 40

// parsePorts reads a rule's toPorts the way Cilium reads PortRule and
// PortDenyRule: numeric ports 0..65535, 0 (or none) meaning every port, an
// endPort at or above the port making a range, protocol TCP, UDP, SCTP or
// ANY (the default, all three). Named ports, other protocols and L7 rules
// are refused as not modelled.
func parsePorts(v any, path string) ([]portRange, error) {
	var out []portRange
	err := eachEntry(v, path, "a port rule", func(rule map[string]any, pp string) error {
		for k := range rule {
			if k != "ports" {
				return fmt.Errorf("%s.%s: not modelled", pp, k)
			}
		}
		ports, ok := rule["ports"].([]any)
		if !ok {
			return fmt.Errorf("%s.ports: must be a list", pp)
		}
		if len(ports) > maxPorts {
			return fmt.Errorf("%s.ports: too many ports, the max is %d", pp, maxPorts)
		}
		for j, p := range ports {
			r, err := parsePortProtocol(p, fmt.Sprintf("%s.ports[%d]", pp, j))
			if err != nil {
				return err
			}
			out = append(out, r)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func parsePortProtocol(v any, path string) (portRange, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return portRange{}, fmt.Errorf("%s: must be a port", path)
	}
	for k := range m {
		if k != "port" && k != "endPort" && k != "protocol" {
			return portRange{}, fmt.Errorf("%s.%s: unknown field", path, k)
		}
	}
	var r portRange
	switch p := m["port"].(type) {
	case nil:
	case string:
		n, err := strconv.Atoi(p)
		if err != nil {
			return portRange{}, fmt.Errorf("%s.port: %q: named ports are not modelled", path, p)
		}
		if n < 0 || n > 65535 {
			return portRange{}, fmt.Errorf("%s.port: %d is not a port", path, n)
		}
		r.from = n
	default:
		return portRange{}, fmt.Errorf("%s.port: must be a string", path)
	}
	r.to = r.from
	if e, ok := m["endPort"]; ok {
		n, ok := asInt(e)
		if !ok || n < 0 || n > 65535 {
			return portRange{}, fmt.Errorf("%s.endPort: must be a port number", path)
		}
		if r.from == 0 && n != 0 {
			return portRange{}, fmt.Errorf("%s.endPort: a range from port 0 is not modelled", path)
		}
		if n != 0 && n < r.from {
			return portRange{}, fmt.Errorf("%s.endPort: %d is below port %d", path, n, r.from)
		}
		if n != 0 {
			r.to = n
		}
	}
	switch proto, _ := m["protocol"].(string); proto {
	case "", "ANY":
		r.protocols = []string{TCP, UDP, SCTP}
	case TCP, UDP, SCTP:
		r.protocols = []string{proto}
	default:
		return portRange{}, fmt.Errorf("%s.protocol: %q is not modelled", path, proto)
	}
	return r, nil
}

func asInt(v any) (int, bool) {
	switch n := v.(type) {
	case int:
		return n, true
	case int64:
		return int(n), true
	case float64:
		if n == float64(int(n)) {
			return int(n), true
		}
	}
	return 0, false
}

// matches reports whether the flow uses one of the range's protocols and
// ports; port 0 is every port of the protocols.
func (r portRange) matches(f Flow) bool {
	if !slices.Contains(r.protocols, f.Protocol) {
		return false
	}
	return r.from == 0 || r.from <= f.Port && f.Port <= r.to
}
