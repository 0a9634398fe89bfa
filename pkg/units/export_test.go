package units

// SizedGroups exposes sizedGroups to the black-box tests, for fleet sizes
// too large to lay out in a test.
var SizedGroups = sizedGroups

// PlatformReadyExpr is the readyExpr of a unit's wait for the platform unit.
const PlatformReadyExpr = platformReadyExpr
