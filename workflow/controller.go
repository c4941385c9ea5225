package workflow

import (
	"slices"
	"strings"

	"github.com/flowteam/flowteam/flow"
)

// Controller decides who may operate which node and which nodes move on by
// themselves. Write one for a role system; ActorController covers nodes that name
// their operator in their meta.
type Controller interface {
	// Auto reports whether n completes by itself when the instance reaches it
	// (running its task) instead of waiting for someone.
	Auto(n *flow.Node) bool
	// Operable reports whether a may claim, forward or send back n.
	Operable(a Actor, n *flow.Node) bool
	// Admin reports whether a may operate every node and submit the actions that
	// move an instance out of order: forward_jump, back_jump, restart, terminate.
	Admin(a Actor) bool
}

// Named is a Controller that names its rules. The executor records the name with a
// new instance and refuses a call whose controller has another name: a claim with
// other actor keys would take every node for one that moves on by itself, and
// complete it.
type Named interface {
	Name() string
}

// ActorController lets the actor operate a node whose meta value for one of Keys
// equals the actor's value for that key; a node with none of the keys in its meta
// moves on by itself. An actor whose value for a key is one of Admins is an
// administrator.
type ActorController struct {
	Keys   []string // default: "actor"
	Admins []string
}

// NewActorController returns an ActorController reading the given meta keys
// ("actor" when none is given).
func NewActorController(keys ...string) *ActorController {
	if len(keys) == 0 {
		keys = []string{"actor"}
	}
	return &ActorController{Keys: keys}
}

// WithAdmins returns c with the given administrator values added.
func (c *ActorController) WithAdmins(values ...string) *ActorController {
	c.Admins = append(c.Admins, values...)
	return c
}

func (c *ActorController) keys() []string {
	if len(c.Keys) == 0 {
		return []string{"actor"}
	}
	return c.Keys
}

// Name is "actor:" and the keys, comma-separated (administrators may differ per call).
func (c *ActorController) Name() string { return "actor:" + strings.Join(c.keys(), ",") }

// Auto reports whether n has none of the keys in its meta (an end node always
// moves on).
func (c *ActorController) Auto(n *flow.Node) bool {
	if n.Type == flow.End {
		return true
	}
	for _, k := range c.keys() {
		if _, ok := n.Meta[k]; ok {
			return false
		}
	}
	return true
}

// Operable reports whether the actor's value for a key equals n's meta value for it,
// or the actor is an administrator.
func (c *ActorController) Operable(a Actor, n *flow.Node) bool {
	for _, k := range c.keys() {
		if v, ok := a[k]; ok && v != "" && v == n.MetaString(k) {
			return true
		}
	}
	return c.Admin(a)
}

// Admin reports whether one of the actor's values for the keys is an administrator
// value.
func (c *ActorController) Admin(a Actor) bool {
	for _, k := range c.keys() {
		if v, ok := a[k]; ok && slices.Contains(c.Admins, v) {
			return true
		}
	}
	return false
}

// BlockController makes every activity wait for someone; anyone may operate it and
// submit any action (it checks no identity).
type BlockController struct{}

// Name is "block".
func (BlockController) Name() string { return "block" }

// Auto reports whether n is not an activity.
func (BlockController) Auto(n *flow.Node) bool { return n.Type != flow.Activity }

// Operable is always true.
func (BlockController) Operable(Actor, *flow.Node) bool { return true }

// Admin is always true.
func (BlockController) Admin(Actor) bool { return true }

// NotBlockController lets every node move on by itself: a claim runs the instance
// to its end (or to a task that stops it).
type NotBlockController struct{}

// Name is "not-block".
func (NotBlockController) Name() string { return "not-block" }

// Auto is always true.
func (NotBlockController) Auto(*flow.Node) bool { return true }

// Operable is always true.
func (NotBlockController) Operable(Actor, *flow.Node) bool { return true }

// Admin is always true.
func (NotBlockController) Admin(Actor) bool { return true }
