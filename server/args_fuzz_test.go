package server

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/retrace-dev/retrace/llmerr"
)

// FuzzDecodeArgs decodes arbitrary bytes as the arguments of four real
// tools (browser_click, browser_type, browser_fill_form, browser_wait_for),
// with the schemas addTool infers and resolves. decodeArgs never panics.
// What it accepts is a JSON object (or nothing) with only the tool's
// arguments, each required one present, decoded to the values sent, and
// decodes again to the same value from its own JSON; browser_wait_for's
// time, which its handler clamps, is always finite. What it refuses renders
// as an INVALID_PARAMS plan.
func FuzzDecodeArgs(f *testing.F) {
	for _, s := range []string{
		`{"ref": "e12"}`, `{"ref": "e12", "element": "Save button", "snapshot": true, "role": "admin"}`,
		`{"ref": "e3", "text": "hello", "submit": true}`,
		`{"fields": [{"ref": "e4", "value": "Ada"}, {"ref": "e5", "value": "true"}]}`, `{"fields": null}`,
		`{"fields": [{"ref": "e4"}]}`, `{"fields": [{"ref": "e4", "value": "x", "extra": 1}]}`,
		`{"time": 2}`, `{"time": -1}`, `{"time": 1e308}`, `{"time": 1e309}`, `{"time": null}`, `{"text": "Done", "time": 0.5}`,
		`{"ref": 12}`, `{"ref": null}`, `{"REF": "e1"}`, `{"ref": "e1", "Ref": "e2"}`, `{"ref": "e1", "ref": "e2"}`,
		`{"ref": "e1", "snapshot": "yes"}`, `{"ref": "\ud800"}`, "{\"ref\": \"\xff\"}", `{}`, `[]`, `"e1"`, `null`, ``, `{`,
		`{"ref": "e1"} {"ref": "e2"}`,
	} {
		f.Add([]byte(s))
	}
	click := fuzzSchema[clickArgs](f)
	typ := fuzzSchema[typeArgs](f)
	form := fuzzSchema[fillFormArgs](f)
	wait := fuzzSchema[waitArgs](f)
	f.Fuzz(func(t *testing.T, raw []byte) {
		fuzzDecode(t, raw, click, func(in clickArgs, m map[string]any) bool {
			return m["ref"] == in.Ref && optString(m, "element") == in.Element && optString(m, "role") == in.Role
		})
		fuzzDecode(t, raw, typ, func(in typeArgs, m map[string]any) bool {
			return m["ref"] == in.Ref && m["text"] == in.Text && (m["submit"] == true) == in.Submit
		})
		fuzzDecode(t, raw, form, func(in fillFormArgs, m map[string]any) bool {
			fields, _ := m["fields"].([]any)
			if len(fields) != len(in.Fields) {
				return false
			}
			for i, v := range fields {
				o, _ := v.(map[string]any)
				if o["ref"] != in.Fields[i].Ref || o["value"] != in.Fields[i].Value {
					return false
				}
			}
			return true
		})
		fuzzDecode(t, raw, wait, func(in waitArgs, m map[string]any) bool {
			if in.Time == nil {
				return m["time"] == nil
			}
			return !math.IsNaN(*in.Time) && !math.IsInf(*in.Time, 0) && m["time"] == *in.Time
		})
	})
}

// fuzzTool is one tool's schema, as addTool builds it.
type fuzzTool struct {
	tool     *mcp.Tool
	schema   *jsonschema.Schema
	resolved *jsonschema.Resolved
}

func fuzzSchema[In any](f *testing.F) fuzzTool {
	f.Helper()
	schema, err := jsonschema.For[In](nil)
	if err != nil {
		f.Fatal(err)
	}
	resolved, err := schema.Resolve(nil)
	if err != nil {
		f.Fatal(err)
	}
	return fuzzTool{tool: &mcp.Tool{Name: reflect.TypeFor[In]().Name()}, schema: schema, resolved: resolved}
}

// fuzzDecode decodes raw for one tool and checks the result; same says
// whether the decoded value holds what the JSON object m sent.
func fuzzDecode[In any](t *testing.T, raw []byte, tt fuzzTool, same func(in In, m map[string]any) bool) {
	t.Helper()
	in, err := decodeArgs[In](raw, tt.resolved)
	if err != nil {
		e := invalidParams(tt.tool, tt.schema, err)
		if e.Code != llmerr.InvalidParams || e.Text(llmerr.StyleRecovery) == "" || e.Message == "" {
			t.Fatalf("%s: refusal of %q renders badly: %+v", tt.tool.Name, raw, e)
		}
		if _, err := json.Marshal(e.Structured()); err != nil {
			t.Fatalf("%s: refusal of %q does not encode: %v", tt.tool.Name, raw, err)
		}
		return
	}
	m := map[string]any{}
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatalf("%s: accepted %q, which is not a JSON object: %v", tt.tool.Name, raw, err)
		}
	}
	for k := range m {
		if _, ok := tt.schema.Properties[k]; !ok {
			t.Fatalf("%s: accepted %q with the unknown argument %q", tt.tool.Name, raw, k)
		}
	}
	for _, k := range tt.schema.Required {
		if _, ok := m[k]; !ok {
			t.Fatalf("%s: accepted %q without the required argument %q", tt.tool.Name, raw, k)
		}
	}
	if !same(in, m) {
		t.Fatalf("%s: %q decoded to %+v", tt.tool.Name, raw, in)
	}
	again, _ := json.Marshal(in)
	in2, err := decodeArgs[In](again, tt.resolved)
	if err != nil || !reflect.DeepEqual(in, in2) {
		t.Fatalf("%s: %q decoded to %+v, whose JSON %s decodes to %+v, %v", tt.tool.Name, raw, in, again, in2, err)
	}
	_, _ = callOptions(in)
}

// optString is m[k] as a string: "" when absent, a marker no decoded
// string equals when it is not a string.
func optString(m map[string]any, k string) string {
	v, ok := m[k]
	if !ok {
		return ""
	}
	if s, ok := v.(string); ok {
		return s
	}
	return "\x00not a string"
}
