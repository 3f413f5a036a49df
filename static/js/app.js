// portal behaviour
