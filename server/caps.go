package server

import "slices"

// Caps are the capabilities --caps can add, each with the tools it lists
// beyond the default set. The default set stays small (its tools/list is
// budgeted, TestToolListTokenBudget); what test writers need past it is
// asked for by name, or all at once with "all".
var Caps = map[string][]string{
	"pdf":         {"browser_pdf_save"},
	"network":     {"browser_network_request", "browser_route", "browser_unroute", "browser_network_conditions"},
	"storage":     {"browser_cookies", "browser_local_storage"},
	"performance": {"browser_performance"},
	"tracing":     {"browser_start_tracing", "browser_stop_tracing"},
	"testing":     {"browser_generate_test"},
}

// capAdders register each capability's tools.
var capAdders = map[string]func(*Server){
	"pdf":         (*Server).addPDFTools,
	"network":     (*Server).addNetworkTools,
	"storage":     (*Server).addStorageTools,
	"performance": (*Server).addPerfTools,
	"tracing":     (*Server).addTracingTools,
	"testing":     (*Server).addTestingTools,
}

// CapNames are the capabilities, sorted, and "all".
func CapNames() []string {
	names := make([]string, 0, len(Caps)+1)
	for n := range Caps {
		names = append(names, n)
	}
	slices.Sort(names)
	return append(names, "all")
}

// addCaps registers the tools of the capabilities asked for.
func (s *Server) addCaps(caps []string) {
	all := slices.Contains(caps, "all")
	for _, name := range CapNames() {
		if add := capAdders[name]; add != nil && (all || slices.Contains(caps, name)) {
			add(s)
		}
	}
}

// hasCap reports whether the server lists the tools of capability name.
func (s *Server) hasCap(name string) bool {
	return slices.Contains(s.cfg.Caps, name) || slices.Contains(s.cfg.Caps, "all")
}
