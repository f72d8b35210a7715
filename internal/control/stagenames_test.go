package control

// The names of the stages the tests refer to (see stages.Of).
const (
	StageMap    = "map"
	StageReduce = "reduce"
	StageGather = "gather"
	StageVerify = "verify"
)
