package main

import "testing"

func TestSpliceTasks(t *testing.T) {
	sec := tasksStart + "\nnew\n" + tasksEnd + "\n"
	tests := []struct{ name, doc, want string }{
		{"replaces", "# B\n\n" + tasksStart + "\nold\n" + tasksEnd + "\n\n" + generatedMarker + "\nx\n",
			"# B\n\n" + sec + "\n" + generatedMarker + "\nx\n"},
		{"above the generated part", "# B\n\nhand\n\n" + generatedMarker + "\nx\n",
			"# B\n\nhand\n\n" + sec + "\n" + generatedMarker + "\nx\n"},
		{"at the end", "# B\n\nhand\n", "# B\n\nhand\n\n" + sec},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := spliceTasks(tt.doc, sec)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
	if _, err := spliceTasks(tasksStart+"\nno end", sec); err == nil {
		t.Error("no error for a start marker without an end")
	}
}
