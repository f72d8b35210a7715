package pipeline

// The names of the stages the tests refer to (see stage.Stages).
const (
	StageMap    = "map"
	StageReduce = "reduce"
	StageGather = "gather"
	StageVerify = "verify"
)
