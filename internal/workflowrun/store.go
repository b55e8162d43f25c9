package workflowrun

import (
	"context"
	"time"

	"github.com/docsmith/docsmith/internal/tenant"
	"github.com/docsmith/docsmith/internal/workflow"
)

// Store keeps what workflows need between triggers: the workflows read
// from each project's base ref, the last schedule slot each one started,
// and the webhook deliveries already handled.
type Store interface {
	// SaveWorkflows replaces the project's workflows with wfs, read at
	// state.BaseSHA: workflows no longer there are removed; those kept keep
	// their FirstSeen and LastSlot; new ones are first seen at
	// state.SyncedAt.
	SaveWorkflows(ctx context.Context, projectID string, state SyncState, wfs []workflow.Workflow) error
	// Workflows returns the project's workflows sorted by id and how they
	// were read; a project never synced has a zero SyncState and none.
	Workflows(ctx context.Context, projectID string) (SyncState, []Stored, error)
	// AdvanceSlot records that the workflow's schedule slot at has
	// started. LastSlot only moves forward; an unknown workflow is not an
	// error (it was removed meanwhile).
	AdvanceSlot(ctx context.Context, projectID, workflowID string, at time.Time) error
	// DeliverySeen reports whether the project handled a webhook delivery
	// with this id before, or, when push is not nil, the same push under
	// any delivery id.
	DeliverySeen(ctx context.Context, projectID, deliveryID string, push *Pushed) (bool, error)
	// RecordDelivery records a handled delivery and the push it carried;
	// recording either twice is not an error. Deliveries older than
	// DeliveryRetention, and pushes older than PushRetention, may be
	// forgotten.
	RecordDelivery(ctx context.Context, projectID string, d Handled) error
}

// Handled is a webhook delivery the project handled.
type Handled struct {
	ID    string
	Forge string
	// Push is what the delivery pushed; nil for a delivery of another
	// event, a tag push or a branch deletion.
	Push *Pushed
	At   time.Time
}

// Pushed identifies a push whatever delivery reported it: the same branch
// of the same repository moved from the same commit to the same commit. A
// captured push sent again under a new delivery id is the same Pushed, so
// it starts nothing; a push that moves a branch back to a commit it was at
// before has another Before, so it runs.
type Pushed struct {
	// Repo is the repository's full name in lower case: forges match
	// names without regard to case.
	Repo   string
	Branch string
	// Before and After are commit ids in lower-case hex.
	Before, After string
}

// DeliveryRetention is how long a handled webhook delivery is remembered.
// Forges redeliver within hours; a delivery replayed after this is still
// kept from starting a second run by its push (PushRetention).
const DeliveryRetention = 30 * 24 * time.Hour

// PushRetention is how long a handled push is remembered: a signed push
// captured by someone else and sent again within this time starts nothing.
// It is kept longer than a delivery because its sender need not be the
// forge; after a year, a replay asks for the docs of a year-old change.
const PushRetention = 365 * 24 * time.Hour

// SyncState is how a project's workflows were last read.
type SyncState struct {
	// BaseSHA is the base ref's commit the files were read at.
	BaseSHA  string
	SyncedAt time.Time
	// Problems are the files left out, with what is wrong in them.
	Problems []workflow.Problem
}

// Stored is a workflow as the store keeps it.
type Stored struct {
	Workflow workflow.Workflow
	// FirstSeen is when a sync first found it: a schedule never runs for
	// slots before it.
	FirstSeen time.Time
	// LastSlot is the latest schedule slot started, or zero.
	LastSlot time.Time
}

// Tenants finds projects.
type Tenants interface {
	GetProject(ctx context.Context, id string) (tenant.Project, error)
	ListOrgs(ctx context.Context) ([]tenant.Org, error)
	ListProjects(ctx context.Context, orgID string) ([]tenant.Project, error)
}

// Repos reads a project's docs repository.
type Repos interface {
	// BaseSHA is the commit the project's base ref points at on its remote.
	BaseSHA(ctx context.Context, p tenant.Project) (string, error)
	// ReadWorkflows reads the workflow files at the project's base ref and
	// returns the commit it read them at.
	ReadWorkflows(ctx context.Context, p tenant.Project) (sha string, wfs []workflow.Workflow, problems []workflow.Problem, err error)
}
