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
	// DeliverySeen reports whether the project's webhook delivery id was
	// handled before.
	DeliverySeen(ctx context.Context, projectID, deliveryID string) (bool, error)
	// RecordDelivery records a handled delivery; recording it twice is not
	// an error. Deliveries older than DeliveryRetention may be forgotten.
	RecordDelivery(ctx context.Context, projectID, deliveryID, forge string, at time.Time) error
}

// DeliveryRetention is how long a handled webhook delivery is remembered.
// Forges redeliver within hours; a delivery replayed after this is still
// kept from starting a second run for a day by its runs' idempotency keys.
const DeliveryRetention = 30 * 24 * time.Hour

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
