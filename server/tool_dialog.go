package server

import (
	"context"
	"fmt"

	"github.com/retrace-dev/retrace/browser"
)

// browser_handle_dialog: the agent's answer to the next dialog. The dialog
// itself is reported by the call that opened it (act.go).

type dialogArgs struct {
	Accept     bool    `json:"accept" jsonschema:"Accept (OK) or dismiss (Cancel) the next dialog"`
	PromptText *string `json:"promptText,omitempty" jsonschema:"Text to answer a prompt dialog with"`
	roleArg
}

func (s *Server) addDialogTools() {
	addTool(s, def("browser_handle_dialog", "Answer the next dialog", harmless|idempotent, "Set the answer to the next alert, confirm or prompt (else the --dialog policy answers)."), s.handleDialog)
}

func (s *Server) handleDialog(ctx context.Context, c *call, in dialogArgs) (*response, error) {
	r, unlock, err := c.lockRole()
	if err != nil {
		return nil, err
	}
	defer unlock()
	r.answers.Set(browser.DialogAnswer{Accept: in.Accept, PromptText: in.PromptText})
	how := "dismiss (Cancel)"
	if in.Accept {
		how = "accept (OK)"
		if in.PromptText != nil {
			how += fmt.Sprintf(" with %q for a prompt", *in.PromptText)
		}
	}
	if s.recording() {
		answer := "dialog.dismiss()"
		if in.Accept {
			answer = "dialog.accept()"
			if in.PromptText != nil {
				answer = fmt.Sprintf("dialog.accept(%s)", jsString(*in.PromptText))
			}
		}
		r.tests.add(false, "", []string{fmt.Sprintf("page.once('dialog', (dialog) => %s);", answer)})
	}
	res := &response{}
	res.addDid("The next dialog in role %s will be answered: %s. Now do the action that opens it; its result reports the dialog.", r.name, how)
	return res, nil
}
