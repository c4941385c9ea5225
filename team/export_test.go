package team

// ParseObservation lets the external tests read the observations models were sent.
var ParseObservation = parseObservation
